import { render } from "preact";
import { useState } from "preact/hooks";

function App() {
  const [n, setN] = useState(0);
  return <button onClick={() => setN(n + 1)}>clicked {n}</button>;
}

render(<App />, document.getElementById("app")!);

// Type probes (removed by the core work).
import { api } from "./api/client";
export async function probe() {
  const r = await api.get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: "[]" });
  r.messages[0]?.content;
  const e = await api.patch("/messages/{message_id}", { message_id: 3, content: "x" });
  await api.post("/messages", { type: "stream", to: "general", topic: "t", content: "hi" });
  return e;
}
