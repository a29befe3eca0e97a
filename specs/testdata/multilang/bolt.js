// A shell bolt for goshelter's multilang specs, written like Storm's official
// Node client: input arrives in chunks, frames are split on the "end" line,
// messages are handled asynchronously, and task ids are matched to emits in order.
'use strict';
const fs = require('fs');
const path = require('path');

let buffer = '';
let handshakeDone = false;
const taskIdCallbacks = [];

function send(msg) {
  process.stdout.write(JSON.stringify(msg) + '\nend\n');
}

function emit(values, anchors, onTaskIds) {
  taskIdCallbacks.push(onTaskIds);
  send({ command: 'emit', tuple: values, anchors: anchors });
}

function handle(msg) {
  if (!handshakeDone) {
    handshakeDone = true;
    send({ pid: process.pid });
    fs.writeFileSync(path.join(msg.pidDir, String(process.pid)), '');
    return;
  }
  if (Array.isArray(msg)) {
    const cb = taskIdCallbacks.shift();
    if (cb) cb(msg);
    return;
  }
  if (msg.task === -1 && msg.stream === '__heartbeat') {
    send({ command: 'sync' });
    return;
  }
  const words = String(msg.tuple[0]).split(/\s+/).filter((w) => w.length > 0);
  let waiting = words.length;
  if (waiting === 0) {
    send({ command: 'ack', id: msg.id });
    return;
  }
  for (const w of words) {
    emit([w.toUpperCase()], msg.id, () => {
      waiting -= 1;
      if (waiting === 0) send({ command: 'ack', id: msg.id });
    });
  }
}

process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  const lines = buffer.split('\n');
  buffer = lines.pop();
  let pending = [];
  for (const line of lines) {
    if (line === 'end') {
      handle(JSON.parse(pending.join('\n')));
      pending = [];
    } else {
      pending.push(line);
    }
  }
  if (pending.length > 0) buffer = pending.join('\n') + '\n' + buffer;
});
process.stdin.on('end', () => process.exit(0));
