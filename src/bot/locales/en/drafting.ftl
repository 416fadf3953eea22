# AI drafts for experts (src/bot/features/drafting.ts, src/drafting). Staff-facing: rendered in the desk's language.
# Nothing here is ever sent to the client: a draft reaches the client only through Send, as the expert's answer.

drafting-btn-draft = ✍️ Draft answer
drafting-btn-retry = ✍️ Try again
drafting-btn-send = ✅ Send to client
drafting-btn-edit = ✏️ Edit
drafting-btn-discard = 🗑 Discard

drafting-ack = ⏳ Drafting #{$id} ({$left} of {$total} drafts left on this consultation; this draft may use up to {$tokens} tokens, model {$model}).

drafting-draft =
    🤖 Draft #{$id}{ $version ->
        [1] {""}
       *[other] , version {$version}
    } · {$model} · {$usage}{ $truncated ->
        [yes] {" "}· shortened to fit a message
       *[no] {""}
    }
    Nothing is sent until you press “Send to client”.
    ———
    {$text}
drafting-usage = {$input} + {$output} tokens, {$cost} charged
drafting-usage-unreported = the provider reported no usage: charged the upper bound ({$held})
drafting-held = {$tokens} tokens{ $money ->
        [none] {""}
       *[other] {" "}/ {$money}
    }
drafting-charged-usage = {$input} + {$output} tokens = {$cost}
drafting-charged-bound = the held upper bound, {$held}
drafting-edited-by = edited by id {$staff}
drafting-empty = ⚠️ Draft #{$id}: the model returned an empty text ({$usage}). Nothing to send.
drafting-failed-unbilled = ⚠️ Draft #{$id} failed: {$reason}. Nothing was charged.
drafting-failed-unknown =
    ⚠️ Draft #{$id} failed: {$reason}. The provider may have charged for it, so up to {$held} stays held until an admin reconciles it (/drafts).
drafting-edit-prompt = ✏️ Draft #{$id}: send the edited text as your next message in this topic (within {$minutes} min). It will not go to the client: the bot offers it again with “Send to client”.
drafting-reconciled-commit = 🧾 Draft #{$id} reconciled by id {$admin}: charged {$charged}.
drafting-reconciled-release = 🧾 Draft #{$id} reconciled by id {$admin}: released, nothing charged.

## Refusals (nothing was reserved or queued)

drafting-refused-disabled = AI drafting is switched off for this desk.
drafting-refused-provider-unavailable = The AI provider is unavailable right now. Nothing was charged.
drafting-refused-not-included = Drafting is not included in this tariff ({$tariff}).
drafting-refused-model-not-allowed = Model {$model} is not allowed. Allowed: {$allowed}.
drafting-refused-no-open-appeal = There is no open question to draft an answer for: the client’s latest question is answered.
drafting-refused-not-active = No drafts: this consultation is not in its window ({$state}).
drafting-refused-no-drafts-left =
    No drafts left on this consultation ({$left} of {$total}){ $held ->
        [0] .
       *[other] ; {$held} held by a draft in progress (it comes back if that draft fails).
    }
drafting-refused-expert-cap =
    Your daily draft cap is reached ({$used} of {$cap} used{ $held ->
        [0] {""}
       *[other] , {$held} in progress
    }). It resets at {$resetsAt}.
drafting-refused-desk-budget =
    The desk’s drafting budget for {$month} is exhausted: {$used} used and {$held} held of {$limit}{ $unit ->
        [tokens] {" "}tokens
       *[money] {""}
    }; this draft needs up to {$needed}{ $unit ->
        [tokens] {" "}tokens
       *[money] {""}
    }.
drafting-refused-too-many-running = Too many drafts running on this desk ({$running} running, limit {$max}). Try again when one finishes.
drafting-refused-unavailable = Drafting is unavailable right now (the quota ledger did not answer). Nothing was charged.

## Button answers (toasts)

drafting-cb-staff-only = Only the desk’s staff can use this.
drafting-cb-queued = Drafting…
drafting-cb-sent = Sent to the client.
drafting-cb-withheld = Recorded, but not delivered: this consultation was refunded and its answers are withheld.
drafting-cb-discarded = Discarded.
drafting-cb-edit = Send the edited text as your next message in this topic.
drafting-cb-already-sent = This draft was already sent.
drafting-cb-already-discarded = This draft was discarded.
drafting-cb-already-editing = You are already editing this draft.
drafting-cb-stale = This is an older version: use the draft’s version {$version}.
drafting-cb-not-ready = This draft cannot be used ({$state}).
drafting-cb-not-found = Draft not found.
drafting-cb-duplicate = Already requested.

## Admins: reconciliation of drafts whose outcome is unknown

drafting-admin-only = Only admins can do this.
drafting-unknown-none = No drafts await reconciliation.
drafting-unknown-list =
    Drafts whose provider outcome is unknown (held until reconciled):
    {$list}
    /draft_commit <id> [input output] charges the tokens the provider reports (without numbers: the held upper bound); /draft_release <id> releases (the provider billed nothing).
drafting-unknown-item = #{$id} · consultation #{$consultation} · by id {$by} · {$age} · holds {$held} · {$reason}
drafting-reconcile-usage = Usage: /draft_commit <id> [input_tokens output_tokens] or /draft_release <id>
drafting-reconcile-committed = Draft #{$id}: committed, charged {$charged}.
drafting-reconcile-released = Draft #{$id}: released, nothing charged.
drafting-reconcile-not-unknown = Draft #{$id} is not awaiting reconciliation ({$state}{ $reconciliation ->
        [none] {""}
       *[other] : {$reconciliation}
    }).
drafting-reconcile-not-found = No draft #{$id} on this desk.
drafting-reconcile-refused = Draft #{$id}: the ledger refused ({$reason}).
