package sessions

import (
	"context"
	"path/filepath"
	"testing"
)

func TestApprovalsMemory(t *testing.T) {
	ctx := context.Background()
	st, err := Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if ok, err := st.ApprovedPattern(ctx, "rm_rf"); ok || err != nil {
		t.Fatalf("fresh store: %v %v", ok, err)
	}
	for _, c := range []struct{ pattern, command string }{{"rm_rf", "rm -rf build"}, {"sudo", "sudo ls"}, {"rm_rf", "rm -rf other"}} {
		if err := st.RememberApproval(ctx, c.pattern, c.command); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.RememberApproval(ctx, "", "x"); err == nil {
		t.Error("empty pattern accepted")
	}
	list, err := st.Approvals(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("%+v %v", list, err)
	}
	for _, a := range list {
		if a.Pattern == "rm_rf" && a.Command != "rm -rf build" {
			t.Errorf("first command not kept: %+v", a)
		}
	}
	if ok, _ := st.ApprovedPattern(ctx, "sudo"); !ok {
		t.Error("sudo not remembered")
	}
	if ok, _ := st.ForgetApproval(ctx, "sudo"); !ok {
		t.Error("forget reported nothing")
	}
	if ok, _ := st.ApprovedPattern(ctx, "sudo"); ok {
		t.Error("sudo still remembered")
	}
}
