// A node process whose wall clock is off by AGENTRT_TEST_CLOCK_SKEW_MS
// (preloaded with `--import` by ClusterNode.start when that variable is set):
// Date.now(), `new Date()` and `Date()` are shifted, so event ids (ULIDs),
// occurredAt and every other node-clock value are skewed, as on a host whose
// clock drifted. Monotonic clocks (performance.now, hrtime) are left alone,
// as they are on a real host.
const skewMs = Number(process.env.AGENTRT_TEST_CLOCK_SKEW_MS ?? 0);

if (!Number.isFinite(skewMs)) throw new Error(`AGENTRT_TEST_CLOCK_SKEW_MS must be a number of milliseconds, got ${process.env.AGENTRT_TEST_CLOCK_SKEW_MS}`);

if (skewMs !== 0) {
  const RealDate = Date;
  const realNow = RealDate.now.bind(RealDate);
  const skewedNow = () => realNow() + skewMs;
  const SkewedDate = new Proxy(RealDate, {
    // `new Date()` is the skewed now; `new Date(value)` is that value, as usual.
    construct(target, args: unknown[], newTarget) {
      return Reflect.construct(target, args.length === 0 ? [skewedNow()] : args, newTarget);
    },
    // `Date()` called as a function answers the current time as a string.
    apply() {
      return new RealDate(skewedNow()).toString();
    },
    get(target, property, receiver) {
      if (property === 'now') return skewedNow;
      return Reflect.get(target, property, receiver);
    },
  });
  globalThis.Date = SkewedDate;
}

export const clockSkewMs = skewMs;
