// "View read receipts": who has read the message (not its sender, nor people who keep their
// reading private).
import { api } from "../../api/client";
import { usersById, type Message } from "../../state/store";
import { openDialog } from "./dialog";

export async function openReceiptsDialog(message: Message): Promise<void> {
  const { user_ids } = await api.get("/messages/{message_id}/read_receipts", { message_id: message.id });
  const names = user_ids.map((id) => usersById.value.get(id)?.full_name ?? "Unknown user").sort((a, b) => a.localeCompare(b));
  openDialog("Read receipts", () =>
    names.length === 0 ? (
      <p class="act-muted">Nobody has read this message yet.</p>
    ) : (
      <div>
        <p>
          {names.length === 1 ? "One person has" : `${names.length} people have`} read this message.
        </p>
        <ul class="act-receipts">
          {names.map((name, i) => (
            <li key={i}>{name}</li>
          ))}
        </ul>
      </div>
    ),
  );
}
