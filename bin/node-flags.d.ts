/** The flags Node.js runs Quire with, however it is started (node-flags.js). */
export const NODE_FLAGS: readonly string[];
