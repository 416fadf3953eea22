# What a support plan's features allow (src/orders/plan-features.ts; the card's words are in subscriptions.ftl).

transcript-not-in-plan = The transcript file is not included in your plan “{$plan}”, so none was made. /mydata still sends you everything we hold about you, this conversation included.
lifecycle-closed-no-transcript = 🔚 Your consultation “{$title}” ended at {$end}. New questions need a new consultation (/tariffs) or a plan (/plan).
