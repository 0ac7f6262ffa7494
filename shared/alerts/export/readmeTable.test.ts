import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { renderAlertTable } from './alertTable.js';

// The README's alert table is the registry's, rendered: a rule changed in code and not in the README fails here.

/** The cells of every table row, trimmed, so that prettier's column alignment does not matter. */
function rows(markdown: string): string[][] {
  return markdown
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[\s|:-]+\|$/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
}

describe('README: the alert table', () => {
  it('is what renderAlertTable() renders from the rules', async () => {
    // Prepare
    const readme = await readFile(new URL('../../../README.md', import.meta.url), 'utf8');
    const section = /<!-- alert-table:[^>]*-->([\s\S]*?)<!-- \/alert-table -->/.exec(readme)?.[1];

    // Assess
    expect(section).toBeDefined();
    expect(rows(section ?? '')).toEqual(rows(renderAlertTable()));
    expect(rows(section ?? '')).toHaveLength(8);
  });
});
