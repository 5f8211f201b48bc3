// Peer: Node.js `ws` echo server (run with `node`). Same contract as echo.ts.
import { WebSocketServer } from "ws";

const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, maxPayload: 16 * 1024 * 1024 + 64 * 1024 });
wss.on("connection", (ws) => {
  ws.on("message", (data, isBinary) => ws.send(data, { binary: isBinary }));
});
wss.on("listening", () => console.log(`READY ${wss.address().port}`));
// Stops by itself when the scenario that started it is gone.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(0);
}, 1000).unref();
process.on("SIGTERM", () => {
  wss.close();
  process.exit(0);
});
