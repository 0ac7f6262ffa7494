import { describe, expect, it } from '@jest/globals';
import { VirtualClock } from './clock.js';

describe('Class: VirtualClock', () => {
  it('moves only when advanced, and never backwards', () => {
    // Prepare
    const clock = new VirtualClock(1_000);

    // Act
    clock.advance(250);

    // Assess
    expect(clock.now()).toBe(1_250);
    expect(() => clock.set(1_000)).toThrow(RangeError);
    expect(() => clock.advance(-1)).toThrow(RangeError);
  });
});
