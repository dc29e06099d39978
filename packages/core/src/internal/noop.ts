export const noop = (): undefined => {};
