#!/usr/bin/env node
// The kubelet-pods command: a thin dispatcher. Each subcommand lives in its own module
// (commands.ts lists them), loaded only when it is asked for, and exports
// `run(args): Promise<number>` (the exit code).

import { hasErrorCode } from '../errors.js';
import { SUBCOMMANDS as subcommands } from './commands.js';

function usage(): string {
  const width = Math.max(...Object.keys(subcommands).map((n) => n.length));
  const lines = Object.entries(subcommands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return [
    'usage: kubelet-pods <command> [options]',
    '',
    'commands:',
    ...lines,
    '',
    'Run `kubelet-pods <command> --help` for the options of a command.',
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${usage()}\n`);
    return name === undefined ? 2 : 0;
  }
  const command = subcommands[name];
  if (command === undefined) {
    process.stderr.write(`kubelet-pods: unknown command ${JSON.stringify(name)}\n\n${usage()}\n`);
    return 2;
  }
  const module = await command.load();
  return module.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`kubelet-pods: ${message}\n`);
    process.exitCode = hasErrorCode(err, 'KP_ERR_CLI_USAGE') ? 2 : 1;
  },
);
