import { createMemoryBus } from "../src";
import { busContract } from "./bus-contract";

describe("memory bus", () => {
  busContract({
    createBus: (_space, options) => createMemoryBus(options),
    multiNode: false,
  });
});
