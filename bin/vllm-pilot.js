#!/usr/bin/env node
// The CLI is TypeScript run through tsx's loader, so a clone works without a build step.
import { register } from 'tsx/esm/api';

// The AWS SDK warns on every run that releases from 2027 need Node 22; the versions pinned here support Node 20.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
register();
await import('../cli/main.ts');
