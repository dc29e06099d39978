/**
 * `Object.freeze`, under a name a minifier can shorten: the core freezes every resolved option
 * and spec, and each `Object.freeze(` stayed whole in an app's bundle. Module-level calls carry
 * a `@__PURE__` mark: through an alias a bundler no longer knows that the call has no side
 * effects, and an unused frozen constant must still drop out.
 */
export const freeze: typeof Object.freeze = Object.freeze;
