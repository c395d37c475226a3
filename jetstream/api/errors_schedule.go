package api

// The error numbers of message schedules (nats-server 2.12+), kept beside
// the rest of errTable in a file of their own.
const (
	ErrMirrorWithMsgSchedules         ErrCode = 10186
	ErrSourceWithMsgSchedules         ErrCode = 10187
	ErrMessageSchedulesDisabled       ErrCode = 10188
	ErrMessageSchedulesPatternInvalid ErrCode = 10189
	ErrMessageSchedulesTargetInvalid  ErrCode = 10190
	ErrMessageSchedulesTTLInvalid     ErrCode = 10191
	ErrMessageSchedulesRollupInvalid  ErrCode = 10192
	ErrMessageSchedulesSourceInvalid  ErrCode = 10203
	ErrMessageSchedulesSchedulerInval ErrCode = 10212
	ErrMessageSchedulesTimeZoneInval  ErrCode = 10223
)

// scheduleErrors are this file's part of errTable.
var scheduleErrors = map[ErrCode]errInfo{
	ErrMirrorWithMsgSchedules:         {400, "stream mirrors can not also schedule messages"},
	ErrSourceWithMsgSchedules:         {400, "stream source can not also schedule messages"},
	ErrMessageSchedulesDisabled:       {400, "message schedules is disabled"},
	ErrMessageSchedulesPatternInvalid: {400, "message schedules pattern is invalid"},
	ErrMessageSchedulesTargetInvalid:  {400, "message schedules target is invalid"},
	ErrMessageSchedulesTTLInvalid:     {400, "message schedules invalid per-message TTL"},
	ErrMessageSchedulesRollupInvalid:  {400, "message schedules invalid rollup"},
	ErrMessageSchedulesSourceInvalid:  {400, "message schedules source is invalid"},
	ErrMessageSchedulesSchedulerInval: {400, "message schedules invalid scheduler"},
	ErrMessageSchedulesTimeZoneInval:  {400, "message schedules time zone is invalid"},
}
