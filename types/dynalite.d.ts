/** dynalite 4 ships no types: the part of its API the twin uses (README of architect/dynalite). */
declare module 'dynalite' {
  import type { Server } from 'node:http';

  interface DynaliteOptions {
    /** Milliseconds tables stay CREATING (default 500). */
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    /** Largest item in KB (default 400, as DynamoDB). */
    maxItemSizeKb?: number;
    /** LevelDB folder; in memory when left out. */
    path?: string;
    ssl?: boolean;
    verbose?: boolean;
    debug?: boolean;
  }

  /** An http.Server speaking the DynamoDB JSON protocol; `close()` also closes its store. */
  function dynalite(options?: DynaliteOptions): Server;

  export default dynalite;
}
