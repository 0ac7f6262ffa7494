// serverless-esbuild 1.57 reads a function's `esbuildEntrypoint` (the file to bundle when the handler string does
// not name it, as in `functions/calibration/lambda.handlers.deploy`) but does not declare it in the configuration
// schema, so osls' strict validation refuses it. This plugin only declares it.
'use strict';

class EsbuildEntrypointSchema {
  constructor(serverless) {
    serverless.configSchemaHandler.defineFunctionProperties('aws', {
      properties: { esbuildEntrypoint: { type: 'string' } },
    });
  }
}

module.exports = EsbuildEntrypointSchema;
