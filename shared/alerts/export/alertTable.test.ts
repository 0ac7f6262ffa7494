import { describe, expect, it } from '@jest/globals';
import { renderAlertTable } from './alertTable.js';

describe('Function: renderAlertTable', () => {
  it("is a markdown table of the seven alerts with the guide's for and severity", () => {
    // Act
    const lines = renderAlertTable().trimEnd().split('\n');

    // Assess
    expect(lines[0]).toBe('| alert | condition | for | severity | meaning |');
    expect(lines).toHaveLength(9);
    expect(lines.slice(2).map((line) => line.split(' | ').slice(2, 4))).toEqual([
      ['2 min', 'warning'],
      ['2 min', 'critical'],
      ['1 min', 'critical'],
      ['30 s', 'critical'],
      ['-', 'warning'],
      ['2 min', 'warning'],
      ['5 min', 'critical'],
    ]);
    expect(lines[5]).toContain('Preemption/OOM imminent');
  });
});
