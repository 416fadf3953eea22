-- tg_budget_settle: Telegram has answered the call that tg_budget_take granted with p_token (src/telegram/budget.ts).
-- Each window is taken as its length plus a margin (p_margin seconds) from the grant, because the call reaches
-- Telegram some time after it; now the call has surely arrived, so its rows move to "answered now, minus the
-- margin": they hold the window until the answer plus its length. A fast answer frees the room earlier than the
-- margin did; a slow one (longer than the margin) holds it longer. Rows already gone from the window are left alone.

create or replace function tg_budget_settle(p_keys text[], p_token uuid, p_margin double precision)
returns void
language sql as $$
  update tg_budget_send s set at = clock_timestamp() - make_interval(secs => p_margin)
    where s.key = any (p_keys) and s.token = p_token;
$$;
