// osls loads `${file(...)}` JavaScript with require(), so this shim is CommonJS: it imports stack.ts through tsx
// (a runtime dependency) and hands serverless.yml the generated pieces. Each export is resolved by osls with
// { resolveConfigurationProperty }; the stack is built once per osls run from `custom.stack`.
'use strict';

let built;

function stack({ resolveConfigurationProperty }) {
  built ??= (async () => {
    const { tsImport } = await import('tsx/esm/api');
    const { buildStack } = await tsImport('../stack.ts', __filename);
    const result = buildStack(await resolveConfigurationProperty(['custom', 'stack']));
    // Accepted but risky parameters (one subnet): said once, packaging goes on.
    for (const warning of result.settings.warnings) process.stderr.write(`vllm-eks-pilot: warning: ${warning}\n`);
    return result;
  })().catch((error) => {
    // Bad stage parameters: one line naming each, printed once, then exit. Thrown, osls would print the error with
    // its stack for every `${file(...)}` that reads this file.
    if (error?.name === 'StackSettingsInvalidError') {
      process.stderr.write(`vllm-eks-pilot: ${error.message.replace(/\s*\n\s*/g, ' ')}\n`);
      process.exit(1);
    }
    // osls asks again once the parameters can be resolved (an early pass throws MISSING_VARIABLE_DEPENDENCY).
    built = undefined;
    throw error;
  });
  return built;
}

const piece = (name) => async (context) => (await stack(context))[name];

module.exports = {
  calibrationFunctions: piece('calibrationFunctions'),
  alertingFunctions: piece('alertingFunctions'),
  alertEvaluatorScheduleEnabled: piece('alertEvaluatorScheduleEnabled'),
  collector: piece('collector'),
  resources: piece('resources'),
  definitionSubstitutions: piece('definitionSubstitutions'),
  slackSubscription: piece('slackSubscription'),
  targets: piece('targets'),
  preflightSettings: piece('preflightSettings'),
  stateMachineRoleArn: piece('stateMachineRoleArn'),
  vpc: piece('vpc'),
};
