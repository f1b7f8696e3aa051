// Imported first by fleet-child.ts, so that it runs before the fleet's modules load, as the
// `fleet` command's loader does (src/cli/commands.ts): the young generation held at its starting
// size from the start (src/fleet/gc-settings.ts).
import { holdYoungGeneration } from '../../src/fleet/gc-settings.js';

holdYoungGeneration();
