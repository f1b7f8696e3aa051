/** Resolves with the first SIGINT or SIGTERM; a second one exits at once. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    // The agent's own timers do not hold the process open (a part that is stopped must not
    // leave one behind): the wait for a signal does, until the signal comes.
    const keepAlive = setInterval(() => {}, 2 ** 30);
    const onSignal = (signal: NodeJS.Signals): void => {
      clearInterval(keepAlive);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      process.once('SIGINT', () => process.exit(130));
      process.once('SIGTERM', () => process.exit(143));
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
