/**
 * The request-length sampler, as JavaScript source text: the k6 script (shared/kube/manifests/k6Script.ts) embeds it
 * verbatim, and the twin's k6 emulation and `vllm-pilot twin capacity` run the same text (sampler.ts evaluates it), so
 * one seed gives one sequence of lengths on EKS and in the twin. It runs in k6's goja, so it uses nothing but the
 * language: no Node APIs, no modules, `var` and plain functions.
 *
 * Why per iteration, not one stream: each k6 VU is a JavaScript runtime of its own, so a stream of draws would depend
 * on which VU ran which iteration. Request `index` (k6's `exec.scenario.iterationInTest`, the twin's iteration
 * number) seeds its own generator instead: FNV-1a over `seed:index`, then mulberry32 (public-domain 32-bit PRNGs,
 * exact in any JavaScript engine through Math.imul and unsigned shifts).
 *
 * Distributions (lengthDistribution.ts validates them): fixed `{tokens}`; uniform `{min, max}`, integers both ends
 * included; normal `{mean, stddev, min, max}`, Box-Muller, rounded and clipped to [min, max]; histogram `{buckets:
 * [{tokens, weight}]}`, a bucket with probability weight / total.
 */
export const SAMPLER_SOURCE = `function vpPilotSeedOf(seed, index) {
  var text = String(seed) + ':' + String(index);
  var h = 2166136261;
  for (var i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}

function vpPilotRandom(state) {
  return function () {
    state = (state + 0x6d2b79f5) | 0;
    var t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function vpPilotSampleLength(dist, random) {
  if (dist.distribution === 'fixed') return dist.tokens;
  if (dist.distribution === 'uniform') return dist.min + Math.floor(random() * (dist.max - dist.min + 1));
  if (dist.distribution === 'normal') {
    var u1 = 1 - random();
    var u2 = random();
    var z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    return Math.min(dist.max, Math.max(dist.min, Math.round(dist.mean + dist.stddev * z)));
  }
  if (dist.distribution === 'histogram') {
    var total = 0;
    for (var i = 0; i < dist.buckets.length; i += 1) total += dist.buckets[i].weight;
    var r = random() * total;
    for (var j = 0; j < dist.buckets.length; j += 1) {
      r -= dist.buckets[j].weight;
      if (r < 0) return dist.buckets[j].tokens;
    }
    return dist.buckets[dist.buckets.length - 1].tokens;
  }
  throw new Error('unknown length distribution ' + JSON.stringify(dist));
}

function vpPilotSampleRequest(mix, index) {
  var random = vpPilotRandom(vpPilotSeedOf(mix.seed, index));
  var promptTokens = vpPilotSampleLength(mix.prompt, random);
  var maxTokens = vpPilotSampleLength(mix.output, random);
  return { promptTokens: promptTokens, maxTokens: maxTokens };
}
`;

/** The function of SAMPLER_SOURCE that samples one request: `(mix, index) => {promptTokens, maxTokens}`. */
export const SAMPLE_REQUEST_FUNCTION = 'vpPilotSampleRequest';
