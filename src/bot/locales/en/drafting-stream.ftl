# Streamed drafts, Stop, and the hand-off summary (src/drafting/stream.ts, handoff.ts; issue 25). For staff only.

drafting-btn-stop = ⏹ Stop
drafting-stream-header = ✍️ Draft #{$id} is being written below. The finished draft will be in the consultation's topic, with Send, Edit and Discard; it also comes here when done.
drafting-stream-done =
    ✅ Draft #{$id} is ready; it is in the topic with Send, Edit and Discard. Nothing was sent to the client.

    {$text}
drafting-stream-stopped =
    ⏹ Draft #{$id} was stopped; what was written until then is in the topic as a draft. Nothing was sent to the client.

    {$text}
drafting-stream-failed = ⚠️ Draft #{$id} did not come through; the topic says why.
drafting-usage-stopped = stopped: {$input} + {$output} tokens until the stop, {$cost} charged
drafting-cb-stopped = Stopping: what was written so far stays as a draft.
drafting-cb-already-stopped = This draft has already been stopped.
drafting-cb-finished = This draft is already finished.

drafting-handoff-summary =
    📋 Summary of consultation #{$consultation}, now yours (for you only; the client does not see it):

    {$text}

    ({$usage})
drafting-handoff-none = 📋 Consultation #{$consultation} is now yours. No summary this time: {$reason}
