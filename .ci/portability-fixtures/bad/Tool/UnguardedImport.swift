// expect: unguarded-import
import Glibc

func isTerminal() -> Bool { isatty(1) != 0 }
