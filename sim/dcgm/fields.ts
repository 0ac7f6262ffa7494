/**
 * The DCGM fields the twin exports, with the Prometheus type and help text of dcgm-exporter's
 * `etc/default-counters.csv` (release 4.5.3-4.8.2), in the file's order. `format` is how the exporter prints the
 * value: int64 fields with `%d`, double fields with `%f` (render_metrics.go).
 */
import { DCGM } from '../../shared/metrics/index.js';

export interface DcgmField {
  name: string;
  type: 'gauge' | 'counter';
  help: string;
  format: 'int' | 'double';
}

/** The 25 metrics enabled in `default-counters.csv` (the `label` row DCGM_FI_DRIVER_VERSION is a label, not a metric). */
export const DCGM_DEFAULT_FIELDS = [
  { name: DCGM.smClock, type: 'gauge', help: 'SM clock frequency (in MHz).', format: 'int' },
  { name: DCGM.memClock, type: 'gauge', help: 'Memory clock frequency (in MHz).', format: 'int' },
  { name: DCGM.memoryTemp, type: 'gauge', help: 'Memory temperature (in C).', format: 'int' },
  { name: DCGM.gpuTemp, type: 'gauge', help: 'GPU temperature (in C).', format: 'int' },
  { name: DCGM.powerUsage, type: 'gauge', help: 'Power draw (in W).', format: 'double' },
  {
    name: DCGM.totalEnergyConsumption,
    type: 'counter',
    help: 'Total energy consumption since boot (in mJ).',
    format: 'int',
  },
  { name: DCGM.pcieReplayCounter, type: 'counter', help: 'Total number of PCIe retries.', format: 'int' },
  { name: DCGM.gpuUtil, type: 'gauge', help: 'GPU utilization (in %).', format: 'int' },
  { name: DCGM.memCopyUtil, type: 'gauge', help: 'Memory utilization (in %).', format: 'int' },
  { name: DCGM.encUtil, type: 'gauge', help: 'Encoder utilization (in %).', format: 'int' },
  { name: DCGM.decUtil, type: 'gauge', help: 'Decoder utilization (in %).', format: 'int' },
  { name: DCGM.xidErrors, type: 'gauge', help: 'Value of the last XID error encountered.', format: 'int' },
  { name: DCGM.fbFree, type: 'gauge', help: 'Framebuffer memory free (in MiB).', format: 'int' },
  { name: DCGM.fbUsed, type: 'gauge', help: 'Framebuffer memory used (in MiB).', format: 'int' },
  { name: DCGM.fbReserved, type: 'gauge', help: 'Framebuffer memory reserved (in MiB).', format: 'int' },
  {
    name: DCGM.nvlinkBandwidthTotal,
    type: 'counter',
    help: 'Total number of NVLink bandwidth counters for all lanes.',
    format: 'int',
  },
  { name: DCGM.vgpuLicenseStatus, type: 'gauge', help: 'vGPU License status', format: 'int' },
  {
    name: DCGM.uncorrectableRemappedRows,
    type: 'counter',
    help: 'Number of remapped rows for uncorrectable errors',
    format: 'int',
  },
  {
    name: DCGM.correctableRemappedRows,
    type: 'counter',
    help: 'Number of remapped rows for correctable errors',
    format: 'int',
  },
  { name: DCGM.rowRemapFailure, type: 'gauge', help: 'Whether remapping of rows has failed', format: 'int' },
  {
    name: DCGM.grEngineActive,
    type: 'gauge',
    help: 'Ratio of time the graphics engine is active.',
    format: 'double',
  },
  {
    name: DCGM.pipeTensorActive,
    type: 'gauge',
    help: 'Ratio of cycles the tensor (HMMA) pipe is active.',
    format: 'double',
  },
  {
    name: DCGM.dramActive,
    type: 'gauge',
    help: 'Ratio of cycles the device memory interface is active sending or receiving data.',
    format: 'double',
  },
  {
    name: DCGM.pcieTxBytes,
    type: 'gauge',
    help: 'The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes per second.',
    format: 'int',
  },
  {
    name: DCGM.pcieRxBytes,
    type: 'gauge',
    help: 'The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per second.',
    format: 'int',
  },
] as const satisfies readonly DcgmField[];

/**
 * The volatile ECC counters, commented out in `default-counters.csv`: exported only when the twin's exporter is
 * configured with them (`eccCounters: true`), as an operator would by adding them to the counters file.
 */
export const DCGM_ECC_FIELDS = [
  {
    name: DCGM.eccSbeVolTotal,
    type: 'counter',
    help: 'Total number of single-bit volatile ECC errors.',
    format: 'int',
  },
  {
    name: DCGM.eccDbeVolTotal,
    type: 'counter',
    help: 'Total number of double-bit volatile ECC errors.',
    format: 'int',
  },
] as const satisfies readonly DcgmField[];

/** The name of a field the twin can export. */
export type DcgmFieldName = (typeof DCGM_DEFAULT_FIELDS)[number]['name'] | (typeof DCGM_ECC_FIELDS)[number]['name'];
