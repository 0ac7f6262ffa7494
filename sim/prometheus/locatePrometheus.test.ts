import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePrometheus } from './ensurePrometheus.js';
import { AlertmanagerNotFoundError, PrometheusNotFoundError } from './errors.js';
import { locatePrometheus } from './locatePrometheus.js';

// These cases never run a binary: they cover what happens when there is nothing usable to run.
let dir: string;
let notExecutable: string;
let aptOnlyDir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'locate-prometheus-test-'));
  notExecutable = join(dir, 'prometheus');
  await writeFile(notExecutable, 'not a binary');
  await chmod(notExecutable, 0o644);
  aptOnlyDir = join(dir, 'apt-only');
  await mkdir(aptOnlyDir);
  await writeFile(join(aptOnlyDir, 'apt-get'), '#!/bin/sh\nexit 1\n');
  await chmod(join(aptOnlyDir, 'apt-get'), 0o755);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('Function: locatePrometheus', () => {
  it.each([
    { case: 'empty PATH', env: { PATH: '' } },
    { case: 'PATH without prometheus', env: { PATH: '/nonexistent-dir' } },
  ])('explains in one line how to get Prometheus: $case', async ({ env }) => {
    // Act
    const error = await locatePrometheus({ env }).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(PrometheusNotFoundError);
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    expect(message).toContain('apt-get install -y prometheus');
    expect(message).toContain('PROMETHEUS_BIN=');
  });

  it.each([
    { case: 'a file that is not executable', bin: () => notExecutable },
    { case: 'a missing file', bin: () => join(dir, 'missing') },
    { case: 'a relative path', bin: () => 'prometheus' },
  ])('rejects a PROMETHEUS_BIN that cannot be run, naming it: $case', async ({ bin }) => {
    // Act
    const error = await locatePrometheus({ env: { PATH: '', PROMETHEUS_BIN: bin() } }).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(PrometheusNotFoundError);
    expect((error as Error).message).toContain(`PROMETHEUS_BIN=${bin()}`);
    expect((error as Error).message).not.toContain('\n');
  });
});

describe('Function: ensurePrometheus', () => {
  it.each([
    { case: 'install not allowed', allowInstall: false, uid: 0, reason: 'automatic install not allowed' },
    { case: 'not root', allowInstall: true, uid: 1000, reason: 'automatic install needs root' },
  ])('does not install and says why, in one line: $case', async ({ allowInstall, uid, reason }) => {
    // Prepare
    const logged: string[] = [];

    // Act
    const error = await ensurePrometheus({
      allowInstall,
      uid,
      env: { PATH: '/nonexistent-dir' },
      log: (line) => logged.push(line),
    }).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(PrometheusNotFoundError);
    expect((error as Error).message).toContain(reason);
    expect((error as Error).message).not.toContain('\n');
    expect(logged.join('\n')).toContain(reason);
  });

  it('does not install under systemd, where the package would start a system service', async () => {
    // Prepare: a PATH with apt-get (never run here) but no prometheus.
    const logged: string[] = [];

    // Act
    const error = await ensurePrometheus({
      allowInstall: true,
      uid: 0,
      systemdRunning: true,
      env: { PATH: aptOnlyDir },
      log: (line) => logged.push(line),
    }).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(PrometheusNotFoundError);
    expect((error as Error).message).not.toContain('\n');
    expect((error as Error).message).toContain('system service');
    expect(logged.join('\n')).not.toContain('installing the Debian package');
  });

  it('does not install over an explicit PROMETHEUS_BIN that is broken', async () => {
    // Act
    const error = await ensurePrometheus({
      allowInstall: true,
      uid: 0,
      systemdRunning: false,
      env: { PATH: '', PROMETHEUS_BIN: notExecutable },
    }).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(PrometheusNotFoundError);
    expect((error as Error).message).toContain('PROMETHEUS_BIN=');
  });
});

describe('Function: ensurePrometheus (Alertmanager)', () => {
  // These cases run `prometheus --version` (a PATH holding only the installed Prometheus).
  let prometheusOnly: string;
  beforeAll(async () => {
    prometheusOnly = join(dir, 'prometheus-only');
    await mkdir(prometheusOnly);
    await symlink('/usr/bin/prometheus', join(prometheusOnly, 'prometheus'));
  });

  it('runs the twin without Alertmanager when it is missing and may not be installed, and says so', async () => {
    // Prepare
    const logged: string[] = [];

    // Act
    const installation = await ensurePrometheus({
      allowInstall: false,
      env: { PATH: prometheusOnly },
      log: (line) => logged.push(line),
    });

    // Assess
    expect(installation.bin).toBe(join(prometheusOnly, 'prometheus'));
    expect(installation.alertmanager).toBeUndefined();
    expect(logged.join('\n')).toContain(
      'prometheus-alertmanager not found; not installing: automatic install not allowed',
    );
    expect(logged.join('\n')).toContain('sudo apt-get install -y prometheus-alertmanager');
  });

  it('does not install over an explicit ALERTMANAGER_BIN that is broken', async () => {
    // Act
    const error = await ensurePrometheus({
      allowInstall: true,
      uid: 0,
      systemdRunning: false,
      env: { PATH: prometheusOnly, ALERTMANAGER_BIN: notExecutable },
    }).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(AlertmanagerNotFoundError);
    expect((error as Error).message).toContain(`ALERTMANAGER_BIN=${notExecutable}`);
  });
});
