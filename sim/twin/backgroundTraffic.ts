import type { Clock } from '../../shared/clock/index.js';
import { runConstantArrivalLoad } from '../load/constantArrival.js';
import type { Profile } from '../profile/profile.js';

/** A profile's production traffic, running through the Service beside whatever else the twin does. */
export interface BackgroundTraffic {
  stop(): Promise<void>;
}

/**
 * Seconds per constant-rate segment: a slowly varying rate is run as a sequence of constant-arrival segments, each at
 * the rate of its start. A segment's requests finish on their own while the next one starts, so the arrivals do not
 * pause between segments.
 */
const SEGMENT_SECONDS = 10;

/**
 * Starts the profile's `traffic`: requests of its own shape at `rateRps` (× (1 + variationFraction × sin(2πt /
 * periodSeconds))) through the Service, as the target's users would send them, until stop(). A calibration on the
 * twin then finds a target that already serves users, as it often does on AWS.
 */
export function startBackgroundTraffic(options: {
  traffic: NonNullable<Profile['traffic']>;
  serviceUrl: string;
  model: string;
  clock: Clock;
  log: (message: string) => void;
}): BackgroundTraffic {
  const { traffic, clock } = options;
  const controller = new AbortController();
  const startedMs = clock.now();
  const running = new Set<Promise<unknown>>();
  const rateAt = (elapsedSeconds: number) =>
    traffic.rateRps *
    (1 + traffic.variationFraction * Math.sin((2 * Math.PI * elapsedSeconds) / traffic.periodSeconds));

  const startSegment = () => {
    if (controller.signal.aborted) return;
    const rps = rateAt((clock.now() - startedMs) / 1000);
    const segment = runConstantArrivalLoad({
      urls: [options.serviceUrl],
      model: options.model,
      rps,
      durationS: SEGMENT_SECONDS,
      promptTokens: traffic.promptTokens,
      maxTokens: traffic.maxTokens,
      clock,
      signal: controller.signal,
    })
      // A segment cut short by stop() or a failed Service is not an error of the twin: its requests count as failed.
      .catch(() => undefined);
    running.add(segment);
    void segment.finally(() => running.delete(segment));
  };
  startSegment();
  const timer = setInterval(startSegment, SEGMENT_SECONDS * 1000);
  options.log(
    `background traffic: ${traffic.rateRps} req/s` +
      (traffic.variationFraction > 0
        ? ` ± ${Math.round(traffic.variationFraction * 100)} % over ${traffic.periodSeconds} s`
        : '') +
      ` (prompt ${traffic.promptTokens} tokens, max_tokens ${traffic.maxTokens}) through ${options.serviceUrl}`,
  );
  return {
    async stop() {
      clearInterval(timer);
      controller.abort();
      await Promise.all([...running]);
    },
  };
}
