import type { z } from 'zod';
import { DmResponseData, ListDmsData, ListDmsInput, ListDmsView, RespondToDmInput, DmPostedView, DmStateView, StartDmInput, StartedDmData } from './dms.ts';
import { HomeData, ShowDotpadInput, HomeView } from './home.ts';
import { CreatedHubData, CreateHubInput, FrontPadData, HubView, JoinHubData, JoinHubInput, MyHubsInput, MyHubsView, OpenHubData, OpenHubInput, SetFrontPadInput } from './hubs.ts';
import { CheckInboxInput, ClaimData, ClaimInboxItemInput, InboxData, InboxView, KeptInboxInput, KeptInboxView, MarkInboxData, MarkInboxInput, WaitData, WaitForChangesInput } from './inbox.ts';
import { InviteData, InviteInput, PlaceInvitesInput, PlaceInvitesView, ThreadGuestsInput } from './invites.ts';
import { HandleData, LinkData, LinkInput, MintedData, MintSubagentInput, RotatedData, RotateKeyInput, SetHandleInput } from './keys.ts';
import { GuideData, HubVisibilityData, ModerateData, ModerateInput, SetHubGuideInput, SetHubVisibilityInput } from './members.ts';
import { TakeOverData, TakeOverHubInput, UndoEverythingData, UndoEverythingInput, UndoPreviewInput, UndoPreviewView } from './moderation.ts';
import {
  CreatedPadData,
  CreatePadInput,
  EditPadData,
  EditPadInput,
  OpenPadData,
  OpenPadInput,
  PadHistoryInput,
  RestoreVersionInput,
  RestoreData,
  PadVersionInput,
  PadAtVersionView,
  PadHistoryView,
  PadView,
  UndoData,
  UndoEditInput,
} from './pads.ts';
import { HubModeData, ReviewQueueInput, ReviewQueueView, SetHubModeInput, SuggestedData, VerifyData, VerifyInput } from './checked.ts';
import { ViewSessionData, ViewSessionInput } from './viewSession.ts';
import { OwnSuggestionsInput, OwnSuggestionsView } from './ownSuggestions.ts';
import { SearchData, SearchInput, SearchView } from './search.ts';
import { DeletedPostData, DeleteHubInput, DeletePadInput, DeletePostInput, DeletionData, DeletionView, EditedPostData, EditPostInput, MentionPeopleInput, MentionPeopleView, RenamedData, RenameInput } from './ownWork.ts';
import { CreateTaskInput, ListTasksInput, SubmitResultInput, TakeTaskInput, TaskChangeData, TaskChangeView, TaskPageData, TaskPageView, UpdateTaskInput } from './tasks.ts';
import {
  CatchUpData,
  CatchUpInput,
  MarkAnswerData,
  MarkAnswerInput,
  OpenThreadData,
  OpenThreadInput,
  PostedDmData,
  PostedReplyData,
  PostReplyInput,
  ReactData,
  ReactInput,
  ReportData,
  ReportInput,
  StartedThreadData,
  StartThreadInput,
  ThreadView,
} from './threads.ts';

/**
 * One contract per tool, for the server and the web app alike: `input`, the arguments the tool parses
 * (its JSON Schema is what tools/list and /openapi.json publish); `data`, the structured content
 * (every model tool declares it: /openapi.json publishes it as each tool's `data`, with what the
 * pipeline adds of its caller, `callerData.ts`; the web app reads it); `view`, what
 * `POST /api/tools/:name` answers the web app beside it. A tool without `view` answers `view: null`;
 * one whose view some calls lack says so with `nullable`.
 */
type Contract = { input: z.ZodObject; data?: z.ZodType<Record<string, unknown>>; view?: z.ZodType };

export const toolContracts = {
  create_hub: { input: CreateHubInput, data: CreatedHubData },
  open_hub: { input: OpenHubInput, data: OpenHubData, view: HubView },
  join_hub: { input: JoinHubInput, data: JoinHubData },
  ui_my_hubs: { input: MyHubsInput, view: MyHubsView },
  ui_set_front_pad: { input: SetFrontPadInput, data: FrontPadData },
  set_hub_visibility: { input: SetHubVisibilityInput, data: HubVisibilityData },
  set_hub_guide: { input: SetHubGuideInput, data: GuideData },
  moderate: { input: ModerateInput, data: ModerateData },
  undo_everything: { input: UndoEverythingInput, data: UndoEverythingData },
  take_over_hub: { input: TakeOverHubInput, data: TakeOverData },
  ui_undo_preview: { input: UndoPreviewInput, view: UndoPreviewView },
  invite: { input: InviteInput, data: InviteData },
  ui_thread_guests: { input: ThreadGuestsInput },
  ui_edit_post: { input: EditPostInput, data: EditedPostData },
  ui_delete_post: { input: DeletePostInput, data: DeletedPostData },
  ui_rename: { input: RenameInput, data: RenamedData },
  ui_delete_pad: { input: DeletePadInput, data: DeletionData, view: DeletionView },
  ui_delete_hub: { input: DeleteHubInput, data: DeletionData, view: DeletionView },
  ui_mention_people: { input: MentionPeopleInput, view: MentionPeopleView },
  ui_invites: { input: PlaceInvitesInput, view: PlaceInvitesView },
  start_thread: { input: StartThreadInput, data: StartedThreadData },
  post_reply: { input: PostReplyInput, data: PostedReplyData.or(PostedDmData), view: DmPostedView.nullable() },
  open_thread: { input: OpenThreadInput, data: OpenThreadData, view: ThreadView },
  mark_answer: { input: MarkAnswerInput, data: MarkAnswerData },
  react: { input: ReactInput, data: ReactData },
  catch_up: { input: CatchUpInput, data: CatchUpData },
  report: { input: ReportInput, data: ReportData },
  start_dm: { input: StartDmInput, data: StartedDmData, view: DmStateView },
  list_dms: { input: ListDmsInput, data: ListDmsData, view: ListDmsView },
  respond_to_dm: { input: RespondToDmInput, data: DmResponseData, view: DmStateView },
  create_task: { input: CreateTaskInput, data: TaskChangeData, view: TaskChangeView },
  take_task: { input: TakeTaskInput, data: TaskChangeData, view: TaskChangeView },
  submit_result: { input: SubmitResultInput, data: TaskChangeData, view: TaskChangeView },
  update_task: { input: UpdateTaskInput, data: TaskChangeData, view: TaskChangeView },
  list_tasks: { input: ListTasksInput, data: TaskPageData, view: TaskPageView },
  check_inbox: { input: CheckInboxInput, data: InboxData, view: InboxView },
  claim_inbox_item: { input: ClaimInboxItemInput, data: ClaimData },
  ui_inbox: { input: KeptInboxInput, view: KeptInboxView },
  ui_inbox_mark: { input: MarkInboxInput, data: MarkInboxData },
  wait_for_changes: { input: WaitForChangesInput, data: WaitData },
  create_pad: { input: CreatePadInput, data: CreatedPadData },
  open_pad: { input: OpenPadInput, data: OpenPadData, view: PadView },
  edit_pad: { input: EditPadInput, data: EditPadData.or(SuggestedData) },
  set_hub_mode: { input: SetHubModeInput, data: HubModeData },
  verify: { input: VerifyInput, data: VerifyData },
  ui_review_queue: { input: ReviewQueueInput, view: ReviewQueueView },
  undo_edit: { input: UndoEditInput, data: UndoData },
  ui_pad_history: { input: PadHistoryInput, view: PadHistoryView },
  ui_pad_version: { input: PadVersionInput, view: PadAtVersionView },
  ui_my_suggestions: { input: OwnSuggestionsInput, view: OwnSuggestionsView },
  ui_restore_pad_version: { input: RestoreVersionInput, data: RestoreData },
  search_dotpad: { input: SearchInput, data: SearchData, view: SearchView },
  show_dotpad: { input: ShowDotpadInput, data: HomeData, view: HomeView },
  link: { input: LinkInput, data: LinkData },
  rotate_key: { input: RotateKeyInput, data: RotatedData },
  set_handle: { input: SetHandleInput, data: HandleData },
  mint_subagent: { input: MintSubagentInput, data: MintedData },
  // The MCP Apps view's own tools: its first call, and its buttons (the model tools they name).
  ui_view_session: { input: ViewSessionInput, data: ViewSessionData },
  ui_post_reply: { input: PostReplyInput, data: PostedReplyData.or(PostedDmData), view: DmPostedView.nullable() },
  ui_react: { input: ReactInput, data: ReactData },
  ui_mark_answer: { input: MarkAnswerInput, data: MarkAnswerData },
  ui_take_task: { input: TakeTaskInput, data: TaskChangeData, view: TaskChangeView },
  ui_update_task: { input: UpdateTaskInput, data: TaskChangeData, view: TaskChangeView },
  ui_moderate: { input: ModerateInput, data: ModerateData },
  ui_invite: { input: InviteInput, data: InviteData },
  ui_set_hub_visibility: { input: SetHubVisibilityInput, data: HubVisibilityData },
} satisfies Record<string, Contract>;

type Contracts = typeof toolContracts;
export type ToolName = keyof Contracts;

/** The arguments a caller sends (before defaults and trimming). */
export type ToolInput<N extends ToolName> = z.input<Contracts[N]['input']>;
/** The structured content, where the contract declares it; any tool's is at least an object. */
export type ToolData<N extends ToolName> = Contracts[N] extends { data: infer D extends z.ZodType } ? z.output<D> : Record<string, unknown>;
/** The web app's view, or null for a tool that has none. */
export type ToolView<N extends ToolName> = Contracts[N] extends { view: infer V extends z.ZodType } ? z.output<V> : null;
