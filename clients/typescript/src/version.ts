/** The package version, sent in User-Agent. Keep in step with package.json (a test checks). */
export const VERSION = "0.1.0";
