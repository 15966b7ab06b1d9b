// A process that starts `sleep 60` through the converters' launcher and prints its pid and the launcher's, for the
// test that kills this process and looks for the sleep (test/convert/launcher.test.ts).
import { launch, launcherPid } from "../../src/convert/launcher.ts";

const program = launch({ file: "/bin/sleep", args: ["60"], env: { PATH: "/usr/bin:/bin" } });
program.on("spawn", () => process.stdout.write(`${program.pid} ${launcherPid()}\n`));
