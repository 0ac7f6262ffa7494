// face (generated)
export * from './alertTable.js';
export * from './ampAlertManagerDefinition.js';
export * from './prometheusRule.js';
export * from './promtoolTests.js';
export * from './ruleGroups.js';
export * from './rulesFile.js';
