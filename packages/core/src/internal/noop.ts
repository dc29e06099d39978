export const noop = (): void => {};
