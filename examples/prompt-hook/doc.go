// Package prompthook is an example prompt hook (config.yaml beside this
// file): the model judges each terminal command before it runs. Copy
// the hooks: block into $HERALD_HOME/config.yaml, approve it (`herald
// hooks list` prints its key), and start the gateway with a real model.
// The test runs the snippet as written, with a stand-in for the model.
package prompthook
