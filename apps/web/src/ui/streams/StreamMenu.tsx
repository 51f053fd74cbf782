// The stream menu (the sidebar's stream "⋮" button). Its items load on the first click.
/** Opens the menu of stream `streamId` under `anchor`; again closes it. */
export function openStreamMenu(streamId: number, anchor: HTMLElement): void {
  void import("./menus").then((m) => m.openStreamMenuNow(streamId, anchor));
}
