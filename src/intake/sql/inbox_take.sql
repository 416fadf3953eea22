-- inbox_take: the durable intake's processors take updates from the inbox (src/intake/processor.ts calls it through
-- inbox.repository.ts).
-- Takes work for a processor. First it marks what the processor finished as done; then (later statements, so
-- they see those marks) it leases up to p_limit chat heads - updates with no earlier pending update of their chat,
-- neither leased by a live holder nor waiting out a backoff - payments first:
--  1. among the candidates the processor names (the updates it stored itself, payments first), in that order:
--     primary-key look-ups and one probe of the chat's queue each, the path almost every update takes;
--  2. when p_scan is set (a processor does it a couple of times a second), among every chat's head: what other
--     processes stored, what a dead processor held, retries that came due.
-- SKIP LOCKED: two processors never take the same update; and an update is no head while an earlier one of its
-- chat is pending, so one chat is never handled twice at once. Marks and leases are bookkeeping: losing the last
-- ones in a server crash makes an update handled again, which every handler tolerates (so the processor may
-- commit them asynchronously).

create or replace function inbox_take(
  p_owner text, p_done_bots bigint[], p_done_ids bigint[], p_cand_bots bigint[], p_cand_ids bigint[],
  p_scan boolean, p_bots bigint[], p_limit integer, p_lease_seconds integer)
returns table (bot_id bigint, update_id bigint, payload json, kind text, attempts integer, tries integer,
               received_at timestamptz)
language plpgsql as $$
#variable_conflict use_column
declare
  v_bots bigint[] := '{}';
  v_ids bigint[] := '{}';
begin
  if cardinality(p_done_ids) > 0 then
    update inbox_update u
      set state = 'done', done_at = clock_timestamp(), lease_owner = null, lease_until = null
      from unnest(p_done_bots, p_done_ids) as d (b, i)
      where u.bot_id = d.b and u.update_id = d.i and u.lease_owner = p_owner and u.state = 'pending';
  end if;
  if p_limit <= 0 then
    return;
  end if;
  -- Picked rows stay locked (FOR UPDATE) until the call ends, so no other processor takes them; the lease is
  -- written once at the end, for the candidates and the scan's picks together.
  if cardinality(p_cand_ids) > 0 then
    select coalesce(array_agg(c.bot_id), '{}'), coalesce(array_agg(c.update_id), '{}') into v_bots, v_ids
      from (
        select c.bot_id, c.update_id
          from unnest(p_cand_bots, p_cand_ids) with ordinality as k (b, i, n)
          join inbox_update c on c.bot_id = k.b and c.update_id = k.i
          where c.state = 'pending' and c.next_attempt_at <= clock_timestamp()
            and (c.lease_until is null or c.lease_until < clock_timestamp())
            and not exists (
              select 1 from inbox_update e
                where e.bot_id = c.bot_id and e.chat_key = c.chat_key and e.state = 'pending'
                  and e.update_id < c.update_id)
          -- In the order given (the processor puts payments first): no sort, so the look-ups stop at the limit.
          order by k.n
          limit p_limit
          for update of c skip locked
      ) c;
  end if;
  if p_scan and cardinality(v_ids) < p_limit then
    select v_bots || coalesce(array_agg(c.bot_id), '{}'), v_ids || coalesce(array_agg(c.update_id), '{}')
      into v_bots, v_ids
      from (
        select c.bot_id, c.update_id
          from inbox_update c
          join (
            select distinct on (h.bot_id, h.chat_key) h.bot_id, h.update_id
              from inbox_update h
              where h.state = 'pending' and h.bot_id = any (p_bots)
              order by h.bot_id, h.chat_key, h.update_id
          ) heads on heads.bot_id = c.bot_id and heads.update_id = c.update_id
          where c.state = 'pending' and c.next_attempt_at <= clock_timestamp()
            and (c.lease_until is null or c.lease_until < clock_timestamp())
            and not exists (
              select 1 from unnest(v_bots, v_ids) as p (b, i) where p.b = c.bot_id and p.i = c.update_id)
          order by c.priority, c.received_at, c.update_id
          limit p_limit - cardinality(v_ids)
          for update of c skip locked
      ) c;
  end if;
  return query
    update inbox_update u
      set lease_owner = p_owner, lease_until = clock_timestamp() + make_interval(secs => p_lease_seconds),
          tries = u.tries + 1
      from unnest(v_bots, v_ids) as picked (b, i)
      where u.bot_id = picked.b and u.update_id = picked.i
      returning u.bot_id, u.update_id, u.payload, u.kind, u.attempts, u.tries, u.received_at;
end $$;
