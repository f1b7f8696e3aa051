// The fleet child's entry: holds the young generation at its starting size, then loads the
// fleet, as the `fleet` command's loader does (src/cli/commands.ts). A static import of the fleet
// would be too late: node loads and compiles a module's whole graph before it runs any of it,
// and that alone grew the young generation past what the command's fleet ever has
// (docs/performance.md, "The fleet memory benchmark's young generation").
import { holdYoungGeneration } from '../../src/fleet/gc-settings.js';

holdYoungGeneration();
await import('./fleet-child-body.js');
