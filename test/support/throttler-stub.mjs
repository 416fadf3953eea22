// See unthrottled.mjs: the throttler's API, passing every call straight through.
export function apiThrottler() {
  return (prev, method, payload, signal) => prev(method, payload, signal)
}
