// `node redis-ping.mjs redis://host:port` exits 0 when a Redis server answers PING there, 1 otherwise.
// A child process, so that test/support/requirements.ts can decide synchronously, while Jest
// collects a file's tests, whether to declare them.
import { connect } from 'node:net';

const url = new URL(process.argv[2]);
const socket = connect(Number(url.port || 6379), url.hostname);
let answer = '';
const finish = (ok) => {
  socket.destroy();
  process.exit(ok ? 0 : 1);
};
socket.setTimeout(2000, () => finish(false));
socket.on('error', () => finish(false));
socket.on('connect', () => socket.write('PING\r\n'));
socket.on('data', (chunk) => {
  answer += chunk;
  // NOAUTH: a server is there, it wants the password that REDIS_URL carries.
  if (answer.includes('\r\n')) finish(answer.startsWith('+PONG') || answer.startsWith('-NOAUTH'));
});
