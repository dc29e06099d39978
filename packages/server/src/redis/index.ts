export { isRedisStoreError, RedisStoreError, type RedisStoreFailure } from './errors';
export { type RedisStreamsOptions, redisStreams } from './streams';
