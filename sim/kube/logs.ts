import type { PodLogStore } from './types.js';

/** How many lines a Pod keeps by default: enough for a k6 summary and a vLLM start-up, small enough for long runs. */
export const DEFAULT_MAX_LINES_PER_POD = 10_000;

interface LogLine {
  /** undefined: written for the Pod as a whole, shown for whichever container is asked for. */
  container: string | undefined;
  text: string;
}

/**
 * Pod logs in memory, as the kubelet keeps container logs: per Pod, in write order, only the most recent lines.
 * Lines appended without a container belong to the Pod's main container, so `kubectl logs POD -c MAIN` shows them.
 */
export class MemoryPodLogStore implements PodLogStore {
  readonly #pods = new Map<string, LogLine[]>();
  readonly #maxLines: number;

  constructor(options: { maxLinesPerPod?: number } = {}) {
    const max = options.maxLinesPerPod ?? DEFAULT_MAX_LINES_PER_POD;
    if (!Number.isInteger(max) || max < 1) {
      throw new RangeError(`MemoryPodLogStore: maxLinesPerPod must be an integer >= 1, got ${String(max)}`);
    }
    this.#maxLines = max;
  }

  /** Appends one line (a text with newlines becomes several lines, so `tailLines` counts what a reader sees). */
  append(namespace: string, pod: string, line: string, container?: string): void {
    const id = key(namespace, pod);
    let lines = this.#pods.get(id);
    if (!lines) {
      lines = [];
      this.#pods.set(id, lines);
    }
    const text = line.endsWith('\n') ? line.slice(0, -1) : line;
    for (const part of text.split('\n')) lines.push({ container, text: part });
    // Trim in batches (amortised O(1) per line); reads only ever show the newest #maxLines.
    if (lines.length >= this.#maxLines * 2) lines.splice(0, lines.length - this.#maxLines);
  }

  /**
   * The log text (each line ends with `\n`), or undefined when nothing was ever written for the Pod.
   * `container` keeps that container's lines and the Pod-wide ones; `tailLines` keeps the last N lines.
   */
  read(namespace: string, pod: string, options: { container?: string; tailLines?: number } = {}): string | undefined {
    const lines = this.#pods.get(key(namespace, pod));
    if (!lines) return undefined;
    const { container, tailLines } = options;
    if (tailLines !== undefined && (!Number.isInteger(tailLines) || tailLines < 0)) {
      throw new RangeError(`MemoryPodLogStore.read: tailLines must be an integer >= 0, got ${String(tailLines)}`);
    }
    let shown = lines.slice(-this.#maxLines);
    if (container !== undefined) shown = shown.filter((l) => l.container === undefined || l.container === container);
    if (tailLines !== undefined) shown = tailLines === 0 ? [] : shown.slice(-tailLines);
    return shown.map((l) => `${l.text}\n`).join('');
  }

  /** Forgets a Pod's logs (the kubelet drops them with the Pod). */
  clear(namespace: string, pod: string): void {
    this.#pods.delete(key(namespace, pod));
  }
}

function key(namespace: string, pod: string): string {
  return `${namespace}/${pod}`;
}
