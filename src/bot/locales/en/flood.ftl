# Anti-flood (src/routing/antiflood.ts): a client writing faster than the desk's rate while a question is open.
desk-flood-told = You are writing faster than the expert can read one by one: your next messages are kept and the expert will see them together. Nothing is lost.
desk-flood-digest = { $count ->
        [one] One more message
       *[other] { $count } more messages
    } from the client:
desk-flood-digest-media = { $what } — see below
