// The topic menu (the sidebar's topic "⋮" button). Its items load on the first click.
/** Opens the menu of `topic` in stream `streamId` under `anchor`; again closes it. */
export function openTopicMenu(streamId: number, topic: string, anchor: HTMLElement): void {
  void import("./menus").then((m) => m.openTopicMenuNow(streamId, topic, anchor));
}
