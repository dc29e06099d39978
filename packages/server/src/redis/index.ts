export { type RedisStreamsOptions, redisStreams } from './streams';
