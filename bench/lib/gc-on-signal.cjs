// Bench only, preloaded (with --expose-gc) into every server of the fan-out bench's idle-memory
// phase, the project and the baselines alike: SIGUSR2 asks the process for full collections, so
// resident memory is read after the garbage of the handshakes is gone, not before a scavenge.
process.on('SIGUSR2', () => {
  global.gc();
  global.gc();
});
