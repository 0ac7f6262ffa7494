/**
 * vLLM's default histogram bucket boundaries (upper bounds; `+Inf` is added at exposition).
 *
 * Source: vllm-project/vllm `vllm/v1/metrics/loggers.py` (identical in the v0.8, v0.10, v0.12-era files and in
 * `vllm/v1/metrics/buckets.py` after PR #48866, "zero behavior change"; snapshot test
 * `tests/v1/metrics/test_histogram_buckets.py`).
 */
export const BUCKETS = {
  requestLatency: [
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0,
    1920.0, 7680.0,
  ],
  timeToFirstToken: [
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0,
    640.0, 2560.0,
  ],
  interTokenLatency: [
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
  ],
  iterationTokens: [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384],
  requestParamsN: [1, 2, 5, 10, 20],
} as const satisfies Record<string, readonly number[]>;

/**
 * The `request_tokens` family: 1, 2, 5, 10, 20, 50, ... up to and including `maxModelLen`
 * (vLLM's `build_1_2_5_buckets(max_model_len)`, loggers.py).
 */
export function build125Buckets(maxModelLen: number): number[] {
  const buckets: number[] = [];
  for (let exponent = 0; ; exponent++) {
    for (const mantissa of [1, 2, 5]) {
      const value = mantissa * 10 ** exponent;
      if (value > maxModelLen) return buckets;
      buckets.push(value);
    }
  }
}
