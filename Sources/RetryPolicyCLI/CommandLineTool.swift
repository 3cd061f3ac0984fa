/// The `retry-policy` command: placeholder until the CLI lands.
public enum CommandLineTool {
  /// Runs the command with the process's arguments and exits with its status.
  public static func main() async {}
}
