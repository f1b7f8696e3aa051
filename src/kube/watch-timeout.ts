/**
 * The server-side timeout of a watch request, in seconds: random in [300, 600), as client-go's
 * reflector picks it (5 to 10 minutes), so that many watchers started together do not all
 * reconnect in the same second. `random` is injectable for tests.
 */
export function randomWatchTimeoutSeconds(random: () => number = Math.random): number {
  return 300 + Math.floor(random() * 300);
}
