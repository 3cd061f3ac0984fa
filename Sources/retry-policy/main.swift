import RetryPolicyCLI

await CommandLineTool.main()
