# Ratings of a closed consultation (src/bot/features/rating.ts, src/consultations/ratings.ts).

rating-ask = How was the consultation? Rate it from 1 to 5:
rating-button = { $score ->
        [1] 😞 1
        [2] 🙁 2
        [3] 😐 3
        [4] 🙂 4
       *[5] 😍 5
    }
rating-saved-short = Rated {$score} of 5.
rating-thanks = Thank you! You rated the consultation {$score} of 5. You can change it within {$days} days by pressing another score, and add a comment.
rating-changed = Your rating is now {$score} of 5.
rating-comment-button = ✍️ Add a comment
rating-comment-ask = ✍️ Write your comment in one message, as a reply to this message. While a consultation is open, messages that are not a reply go to your expert as usual. Changed your mind? Press Cancel above or send /cancel.
rating-comment-cancel = Cancel
rating-comment-placeholder = Your comment on the consultation
rating-comment-saved = Thank you, your comment is saved.
rating-comment-cancelled = No comment added.
rating-too-late = A rating can only be changed within {$days} days; this one stays as it is.
rating-unknown = This consultation cannot be rated from this account.
rating-not-closed = A consultation can be rated once it has ended.

## To the staff (the desk's language)

rating-low-admins = 👎 Low rating {$score}/5: consultation #{$consultation} ({$title}, client id {$user}), owner {$expert}.
rating-low-owner = 👎 Your consultation #{$consultation} ({$title}) was rated {$score}/5 by the client. The admins have been told too.
rating-low-comment = 💬 Comment on the rating {$score}/5 of consultation #{$consultation}: {$comment}
report-ratings-title = ⭐ Ratings of consultations (average, count) by owner (the expert responsible for the consultation; without an owner, the one who answered most):
report-rating-line = • {$who}: {$average} over {$count} { $count ->
        [one] rating
       *[other] ratings
    }
report-who-nobody = no owner, nobody answered
