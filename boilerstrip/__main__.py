import sys

try:
    from boilerstrip.cli import main
except KeyboardInterrupt:  # Ctrl-C while Python is still importing: the same quiet exit as any other moment
    sys.stderr.write("boilerstrip: interrupted\n")
    sys.exit(130)

sys.exit(main())
