-- tg_budget_block: Telegram answered 429 with retry_after: the key waits that long in every process (src/telegram/
-- budget.ts). Never shortens a wait already set.

create or replace function tg_budget_block(p_key text, p_seconds double precision)
returns void
language sql as $$
  insert into tg_budget as b (key, blocked_until)
    values (p_key, clock_timestamp() + make_interval(secs => p_seconds))
    on conflict (key) do update set blocked_until = greatest(b.blocked_until, excluded.blocked_until);
$$;
