// Stands in for the `whatwg-url` package in the Lambda bundles (custom.esbuild.alias in serverless.yml; the bench
// applies the same alias). Its only importer there is node-fetch 2 (under @kubernetes/client-node), which reads
// nothing from it but `URL`, and only as a fallback: `const URL = Url.URL || whatwgUrl.URL` (lib/index.mjs), where
// `Url` is Node's `url` module, whose `URL` has existed since Node 10. On Node the real package is never used, yet
// bundling it costs about 290 kB minified (tr46's Unicode tables, webidl-conversions). This shim hands out Node's
// own WHATWG URL classes, so even a reader of the fallback would get a working URL.
const { URL, URLSearchParams } = globalThis;

export { URL, URLSearchParams };
export default { URL, URLSearchParams };
