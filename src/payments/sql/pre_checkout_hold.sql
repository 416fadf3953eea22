-- requires: ledger_reserve, ledger_settle
--
-- pre_checkout_hold: the whole pre-checkout decision and its capacity hold in one statement - one round trip, no
-- BEGIN/COMMIT - with the same rules, in the same order, as the transaction in src/payments/pre-checkout.ts (which
-- stays as the full path; test/e2e/pre-checkout-paths.test.ts holds the two equal):
--
--   lock the order; unknown (or another bot's) -> order-unknown; another payer -> order-foreign; banned client ->
--   banned; currency not XTR -> wrong-currency; amount <> price -> wrong-amount; cancelled -> order-cancelled; not
--   created/reserved -> order-paid; tariff no longer in config -> tariff-unavailable; older than the unpaid TTL ->
--   order-expired; a scheduled slot already begun -> slot-started; a hold still running -> ok (a redelivered query,
--   or a retry after a failed payment: the same answer, no second hold); otherwise release a lapsed hold, move the
--   order to reserved with the new hold (allowed by the transition table: the caller passes p_can_reserve), and
--   reserve one place on the day's or slot's capacity account through ledger_reserve, last, so that the account row
--   is locked only until the statement commits.
--
-- The common case (a fresh order with an immediate start, every check passing) is one conditional UPDATE that locks
-- the order and moves it; everything else reads the locked row and decides check by check.
--
-- The caller passes what lives in config and app code: the desk's tariffs with their capacities, and the desk-local
-- day it believes it is (ISO date, start, end). What the full path handles is returned as `retry` with nothing
-- changed: the database clock outside that day (midnight, clock skew), an immediate start the client chose at the
-- desk's opening (its place is of the opening's day), a move the transition table refuses. The
-- ledger's refusals roll the whole statement back, as they roll back the full path's transaction, by raising:
--   PC001  the capacity account does not exist yet or holds less than configured: open it (full path) and retry;
--   PC002  no place left (DETAIL: the configured capacity when the account is full, else empty).
--
-- The hold's request id (`hold:<order>:<query id>`), the account key and the ledger fingerprint are those of the
-- full path (src/orders/capacity.ts reservePlace), so either path replays the other's decision. synchronous_commit
-- is off for the statement's transaction, as in the full path: a hold lost to a crash costs nothing
-- (successful_payment takes a free place or agrees a start), and the commit ends the account row's lock. It calls
-- the ledger's own functions (ledger_reserve, ledger_settle), never redefines them.

create or replace function pre_checkout_hold(
  p_bot bigint, p_order bigint, p_user bigint, p_currency text, p_amount integer, p_query_id text,
  p_tariffs text[], p_daily integer[], p_slot integer[],
  p_day_iso text, p_day_start timestamptz, p_day_end timestamptz,
  p_hold_seconds double precision, p_ttl_hours integer, p_can_reserve boolean,
  out o_outcome text, out o_code text, out o_hold_until timestamptz, out o_title text, out o_price integer,
  out o_capacity integer)
language plpgsql as $fn$
declare
  v_now timestamptz := now();
  o record;
  v_i integer;
  v_key text;
  v_start timestamptz;
  v_request text;
  v_subject text;
  r record;
  v_reason text;
  v_granted bigint;
begin
  perform set_config('synchronous_commit', 'off', true);

  -- The common case in one statement: a fresh order of this payer with an immediate start, on the caller's day by
  -- the database clock, every check below passing. The update locks the row and re-checks its conditions on the
  -- latest version after any wait. Anything it does not take is decided check by check below, nothing changed yet.
  if p_can_reserve and p_currency = 'XTR' and p_day_start <= v_now and v_now < p_day_end then
    update orders t
      set state = 'reserved', hold_request_id = 'hold:' || t.id || ':' || p_query_id,
        hold_expires_at = v_now + make_interval(secs => p_hold_seconds),
        capacity_key = 'day:' || t.tariff_code || ':' || p_day_iso, updated_at = now()
      where t.id = p_order and t.bot_id = p_bot and t.user_id = p_user and t.price_stars = p_amount
        and t.state = 'created' and t.hold_request_id is null and t.start_mode = 'immediate' and t.slot_start is null
        and t.kind = 'consultation'
        and t.tariff_code = any(p_tariffs) and t.created_at >= v_now - make_interval(hours => p_ttl_hours)
        and not exists (select 1 from client c
                        where c.bot_id = p_bot and c.user_id = p_user and c.banned_at is not null)
      returning t.tariff_code, t.hold_request_id, t.hold_expires_at, t.capacity_key
      into o;
    if found then
      v_key := o.capacity_key;
      v_start := p_day_start;
      v_request := o.hold_request_id;
      o_hold_until := o.hold_expires_at;
      o_capacity := coalesce(p_daily[array_position(p_tariffs, o.tariff_code)], 0);
    end if;
  end if;

  if o_hold_until is null then
    select t.id, t.bot_id, t.user_id, t.price_stars, t.state, t.tariff_code, t.title, t.created_at, t.start_mode,
           t.slot_start, t.window_minutes, t.hold_request_id, t.hold_expires_at, t.kind
      into o from orders t where t.id = p_order for update;
    -- Another desk's order is as unknown to this bot as a missing one.
    if not found or o.bot_id <> p_bot then
      o_outcome := 'refused'; o_code := 'order-unknown';
      return;
    end if;
    -- A top-up (src/payments/topup.ts) takes no place and checks its consultation: the full path decides.
    if o.kind <> 'consultation' then
      o_outcome := 'retry';
      return;
    end if;
    o_outcome := 'refused';
    o_title := o.title;
    o_price := o.price_stars;
    if o.user_id <> p_user then o_code := 'order-foreign'; return; end if;
    if coalesce((select c.banned_at is not null from client c where c.bot_id = p_bot and c.user_id = p_user),
                false) then
      o_code := 'banned'; return;
    end if;
    if p_currency <> 'XTR' then o_code := 'wrong-currency'; return; end if;
    if p_amount <> o.price_stars then o_code := 'wrong-amount'; return; end if;
    if o.state = 'cancelled' then o_code := 'order-cancelled'; return; end if;
    if o.state <> 'created' and o.state <> 'reserved' then o_code := 'order-paid'; return; end if;
    v_i := array_position(p_tariffs, o.tariff_code);
    if v_i is null then o_code := 'tariff-unavailable'; return; end if;
    if v_now - o.created_at > make_interval(hours => p_ttl_hours) then o_code := 'order-expired'; return; end if;
    if o.start_mode = 'scheduled' and o.slot_start is not null and o.slot_start <= v_now then
      o_code := 'slot-started'; return;
    end if;
    o_title := null;
    o_price := null;

    -- A redelivered query, or the client retrying after a failed payment, while the hold still runs.
    if o.state = 'reserved' and o.hold_expires_at is not null and o.hold_expires_at > v_now then
      o_outcome := 'ok'; o_hold_until := o.hold_expires_at;
      return;
    end if;

    -- The place: the day's account (the caller's desk-local day must hold the database clock), the slot's, or none
    -- (on_request; a scheduled order without a slot).
    if o.start_mode = 'scheduled' then
      if o.slot_start is not null then
        v_key := 'slot:' || o.tariff_code || ':' || floor(extract(epoch from o.slot_start) * 1000)::bigint;
        v_start := o.slot_start;
        o_capacity := coalesce(p_slot[v_i], 0);
      end if;
    elsif o.start_mode <> 'on_request' then
      -- An immediate start chosen at the desk's opening takes a place of the opening's day: the full path decides.
      if o.slot_start is not null or not (p_day_start <= v_now and v_now < p_day_end) then
        o_outcome := 'retry';
        return;
      end if;
      v_key := 'day:' || o.tariff_code || ':' || p_day_iso;
      v_start := p_day_start;
      o_capacity := coalesce(p_daily[v_i], 0);
    end if;
    if o.state = 'created' and not p_can_reserve then
      o_outcome := 'retry';
      return;
    end if;

    o_hold_until := v_now + make_interval(secs => p_hold_seconds);
    -- A lapsed hold the sweeper has not released yet is released here, so the order never holds two places.
    if o.hold_request_id is not null then
      perform ledger_settle(o.hold_request_id, 'released', null, 'allow', 'hold lapsed');
    end if;
    if v_key is not null then
      v_request := 'hold:' || o.id || ':' || p_query_id;
    end if;
    update orders set state = 'reserved', hold_request_id = v_request, hold_expires_at = o_hold_until,
        capacity_key = v_key, updated_at = now()
      where id = o.id;
  end if;

  if v_key is not null then
    -- The place last: the account row it locks is shared by every pre-checkout of that day or slot.
    v_subject := p_bot || ':' || v_key;
    select x.o_outcome, x.o_decision into r
      from ledger_reserve(v_request, array[null]::bigint[], array['desk-capacity'], array[v_subject],
        array['starts'], array[1]::bigint[], v_start, null, null, p_hold_seconds,
        '[[' || to_json('["desk-capacity",' || to_json(v_subject)::text || ',"starts"]')::text || ',1]]') x;
    v_reason := case when r.o_outcome in ('conflict', 'duplicate_account') then r.o_outcome
                     else r.o_decision ->> 'reason' end;
    if v_reason is not null then
      -- The numbers of the account as read under its lock (none for a conflicting request id).
      if r.o_outcome not in ('conflict', 'duplicate_account') then
        v_granted := (r.o_decision -> 'lines' -> 0 ->> 'granted')::bigint;
      end if;
      if v_reason = 'no_account' or (v_granted is not null and v_granted < o_capacity) then
        raise exception 'capacity account % needs a grant', v_subject using errcode = 'PC001';
      end if;
      raise exception 'no place left on %', v_subject using errcode = 'PC002',
        detail = case when v_reason in ('exhausted', 'held_by_active') and v_granted is not null
                      then o_capacity::text else '' end;
    end if;
  end if;
  o_outcome := 'ok';
end
$fn$;
